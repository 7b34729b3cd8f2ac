-- Scheduled prompts: each tick becomes an inbox row keyed by the schedule and the tick's time.
CREATE TABLE "schedules" (
    "id" BIGSERIAL NOT NULL,
    "platform" TEXT NOT NULL,
    "workspace" TEXT NOT NULL,
    "channel" TEXT NOT NULL,
    "owner" TEXT NOT NULL,
    "owner_roles" JSONB NOT NULL DEFAULT '[]',
    "rule" TEXT NOT NULL,
    "time_zone" TEXT NOT NULL,
    "prompt" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "last_tick" TIMESTAMPTZ(6),
    "paused_at" TIMESTAMPTZ(6),
    "paused_reason" TEXT,

    CONSTRAINT "schedules_pkey" PRIMARY KEY ("id")
);

CREATE INDEX "schedules_platform_workspace_channel_idx" ON "schedules"("platform", "workspace", "channel");
