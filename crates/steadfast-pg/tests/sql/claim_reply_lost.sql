-- The provider's claim statement, called as a worker whose reply never arrives (the
-- process dies right after the claim commits): 1 ms lease, 1 ms backoff, fan-out 1.
-- $1 max attempts, $2 duroxide version for the events.
SELECT outcome
FROM S.claim_orchestration('lost', 1, 0, 64, 1, 8, 2000, 1, 1, false, '{0,0,0}', '{0,0,0}',
                           $1, $2)
