-- Durable delivery. Every inbound message is written to the inbox before the platform is told it
-- arrived; a lane (one Slack thread, one Discord channel, one console session) is worked by one
-- replica at a time, under a lease with an expiry, in inbox order; a reply is written to the
-- outbox before it is posted, and each posted chunk records its platform id. The inbox dedupes
-- by the message itself, so processed_events is gone.

-- CreateTable
CREATE TABLE "lanes" (
    "id" BIGSERIAL NOT NULL,
    "platform" TEXT NOT NULL,
    "workspace" TEXT NOT NULL,
    "channel" TEXT NOT NULL,
    "thread" TEXT NOT NULL,
    "conversation_id" UUID,
    "holder" TEXT,
    "lease_expires_at" TIMESTAMPTZ(6),
    "created_at" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "lanes_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "inbox" (
    "id" BIGSERIAL NOT NULL,
    "platform" TEXT NOT NULL,
    "message_key" TEXT NOT NULL,
    "lane_id" BIGINT,
    "kind" TEXT NOT NULL,
    "user_id" TEXT NOT NULL,
    "text" TEXT NOT NULL,
    "delivery" JSONB NOT NULL,
    "status" TEXT NOT NULL,
    "attempts" INTEGER NOT NULL DEFAULT 0,
    "available_at" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "received_at" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "answered_at" TIMESTAMPTZ(6),

    CONSTRAINT "inbox_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "outbox" (
    "id" BIGSERIAL NOT NULL,
    "inbox_id" BIGINT NOT NULL,
    "seq" INTEGER NOT NULL,
    "text" TEXT NOT NULL,
    "platform_message_id" TEXT,
    "posted_at" TIMESTAMPTZ(6),

    CONSTRAINT "outbox_pkey" PRIMARY KEY ("id")
);

-- The user message a turn starts with names its inbox row: a resumed turn never stores it twice.
ALTER TABLE "transcript_messages" ADD COLUMN "inbox_id" BIGINT;
-- Spool numbers tool calls itself; the model's own id is kept for debugging.
ALTER TABLE "tool_calls" ADD COLUMN "model_call_id" TEXT;

-- CreateIndex
CREATE UNIQUE INDEX "lanes_platform_workspace_channel_thread_key" ON "lanes"("platform", "workspace", "channel", "thread");

-- CreateIndex
CREATE UNIQUE INDEX "inbox_platform_message_key_key" ON "inbox"("platform", "message_key");

-- CreateIndex
CREATE INDEX "inbox_lane_id_status_id_idx" ON "inbox"("lane_id", "status", "id");

-- CreateIndex
CREATE INDEX "inbox_status_available_at_idx" ON "inbox"("status", "available_at");

-- CreateIndex
CREATE INDEX "inbox_received_at_idx" ON "inbox"("received_at");

-- CreateIndex
CREATE UNIQUE INDEX "outbox_inbox_id_seq_key" ON "outbox"("inbox_id", "seq");

-- CreateIndex
CREATE UNIQUE INDEX "transcript_messages_inbox_id_key" ON "transcript_messages"("inbox_id");

-- AddForeignKey
ALTER TABLE "lanes" ADD CONSTRAINT "lanes_conversation_id_fkey" FOREIGN KEY ("conversation_id") REFERENCES "conversations"("id") ON DELETE SET NULL ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "inbox" ADD CONSTRAINT "inbox_lane_id_fkey" FOREIGN KEY ("lane_id") REFERENCES "lanes"("id") ON DELETE SET NULL ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "outbox" ADD CONSTRAINT "outbox_inbox_id_fkey" FOREIGN KEY ("inbox_id") REFERENCES "inbox"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- Threads Spool already takes part in keep answering follow-ups: each becomes a lane. A Discord
-- channel's lane points at its newest conversation, since /new starts another.
INSERT INTO "lanes" ("platform", "workspace", "channel", "thread", "conversation_id")
SELECT "platform", "workspace", "channel", "thread", "id" FROM "conversations" WHERE "platform" <> 'discord';
INSERT INTO "lanes" ("platform", "workspace", "channel", "thread", "conversation_id")
SELECT DISTINCT ON ("platform", "workspace", "channel") "platform", "workspace", "channel", 'main', "id"
  FROM "conversations" WHERE "platform" = 'discord'
 ORDER BY "platform", "workspace", "channel", "created_at" DESC;

-- The inbox replaces these: it dedupes by message, and the lane names a channel's conversation.
DROP TABLE "processed_events";
DROP INDEX "conversations_platform_workspace_channel_created_at_idx";
