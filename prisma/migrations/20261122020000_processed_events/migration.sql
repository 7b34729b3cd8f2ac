-- Platform deliveries already answered (Slack event ids, Discord interaction ids): a retried or
-- redelivered event is claimed once, across restarts and replicas.

-- CreateTable
CREATE TABLE "processed_events" (
    "platform" TEXT NOT NULL,
    "event_id" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "processed_events_pkey" PRIMARY KEY ("platform","event_id")
);

-- CreateIndex
CREATE INDEX "processed_events_created_at_idx" ON "processed_events"("created_at");

-- Discord's /new starts a fresh conversation in a channel: the newest one is the current one.
-- CreateIndex
CREATE INDEX "conversations_platform_workspace_channel_created_at_idx" ON "conversations"("platform", "workspace", "channel", "created_at" DESC);
