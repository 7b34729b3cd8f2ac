-- A person's thumbs-up or thumbs-down on an answer: one row per person per answer (a later click
-- replaces it), kept apart from the inbox so that pruning old messages keeps it.
CREATE TABLE "answer_feedback" (
    "id" BIGSERIAL NOT NULL,
    "inbox_id" BIGINT NOT NULL,
    "platform" TEXT NOT NULL,
    "workspace" TEXT NOT NULL,
    "channel" TEXT NOT NULL,
    "asked_by" TEXT NOT NULL,
    "user_id" TEXT NOT NULL,
    "rating" TEXT NOT NULL,
    "reason" TEXT,
    "created_at" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "answer_feedback_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "answer_feedback_rating_check" CHECK ("rating" IN ('up', 'down'))
);

CREATE UNIQUE INDEX "answer_feedback_inbox_id_user_id_key" ON "answer_feedback"("inbox_id", "user_id");
CREATE INDEX "answer_feedback_platform_workspace_updated_at_idx" ON "answer_feedback"("platform", "workspace", "updated_at");
