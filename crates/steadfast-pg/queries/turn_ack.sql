-- See ack_turn (migration 0003). $1 lock token, then the turn (TurnParams in turn.rs).
-- Returns 'ok', 'expired' or 'unknown'.
SELECT __SCHEMA__.ack_turn($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15,
                           $16, $17, $18, $19, $20, $21, $22, $23, $24, $25, $26, $27, $28,
                           $29)
