-- A person's Stop on a message's turn: any replica working the thread honours it, once. A turn
-- superseded by an edit or a deletion of its message ends the same way, with nothing posted.
ALTER TABLE "inbox" ADD COLUMN "stop_requested_at" TIMESTAMPTZ(6);
ALTER TABLE "inbox" ADD COLUMN "stopped_by" TEXT;
ALTER TABLE "inbox" ADD COLUMN "superseded" BOOLEAN NOT NULL DEFAULT false;
