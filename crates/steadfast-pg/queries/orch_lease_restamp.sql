-- Restart a just-claimed lease from now (NULL if the token lost it). $1 token, $2 lock ms.
SELECT __SCHEMA__.restamp_lease($1, $2)
