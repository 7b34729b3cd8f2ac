-- A lane's fencing token: bumped by every acquisition, so a holder whose lease was taken over can
-- tell, and every write that advances the lane's work names the generation it was made under and is
-- refused when that is no longer the lane's.
ALTER TABLE "lanes" ADD COLUMN "generation" BIGINT NOT NULL DEFAULT 0;
