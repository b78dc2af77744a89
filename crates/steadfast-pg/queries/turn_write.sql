-- See write_turn (migration 0003). $1 instance, then the turn (TurnParams in turn.rs).
SELECT __SCHEMA__.write_turn($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15,
                             $16, $17, $18, $19, $20, $21, $22, $23, $24, $25, $26, $27, $28,
                             $29)
