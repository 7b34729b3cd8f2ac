-- A call to a tool that needs approval waits for a person's decision, kept on the call's row so
-- that any replica sees it, and a restart waits on: pending, then approved, denied or expired.
-- The first decision wins: each is one conditional UPDATE on a pending row.
ALTER TABLE "tool_calls" ADD COLUMN "approval" TEXT;
ALTER TABLE "tool_calls" ADD COLUMN "approval_expires_at" TIMESTAMPTZ(6);
ALTER TABLE "tool_calls" ADD COLUMN "approval_by" TEXT;
ALTER TABLE "tool_calls" ADD COLUMN "approval_at" TIMESTAMPTZ(6);
ALTER TABLE "tool_calls" ADD COLUMN "approval_note" TEXT;
-- Set when an approved call starts: an approved call starts once, even across a restart.
ALTER TABLE "tool_calls" ADD COLUMN "run_started_at" TIMESTAMPTZ(6);
-- The approval prompt (with its buttons) is an outbox row of the message whose turn asked, before
-- the reply's rows (negative seq): one per call.
ALTER TABLE "outbox" ADD COLUMN "tool_call_id" TEXT;
CREATE UNIQUE INDEX "outbox_inbox_id_tool_call_id_key" ON "outbox"("inbox_id", "tool_call_id");
