-- A person's Stop on a message's turn: any replica working the thread honours it, once.
ALTER TABLE "inbox" ADD COLUMN "stop_requested_at" TIMESTAMPTZ(6);
ALTER TABLE "inbox" ADD COLUMN "stopped_by" TEXT;
