-- When a call was first put to people: with its deadline, how long they had to decide, whatever
-- the timeout setting of the replica that later expires it.
ALTER TABLE "tool_calls" ADD COLUMN "approval_requested_at" TIMESTAMPTZ(6);
