-- Usage that says who spent what where: each request's row names its place and the person whose
-- message it answered, its cached and reasoning tokens, and its price when it was made. Rows of
-- before take their place from their conversation; who asked and the price were not kept then.
ALTER TABLE "llm_usage" ADD COLUMN "platform" TEXT;
ALTER TABLE "llm_usage" ADD COLUMN "workspace" TEXT;
ALTER TABLE "llm_usage" ADD COLUMN "channel" TEXT;
UPDATE "llm_usage" u SET "platform" = c."platform", "workspace" = c."workspace", "channel" = c."channel"
  FROM "conversations" c WHERE c."id" = u."conversation_id";
ALTER TABLE "llm_usage" ALTER COLUMN "platform" SET NOT NULL;
ALTER TABLE "llm_usage" ALTER COLUMN "workspace" SET NOT NULL;
ALTER TABLE "llm_usage" ALTER COLUMN "channel" SET NOT NULL;
ALTER TABLE "llm_usage" ADD COLUMN "user_id" TEXT;
ALTER TABLE "llm_usage" ADD COLUMN "cached_prompt_tokens" INTEGER NOT NULL DEFAULT 0;
ALTER TABLE "llm_usage" ADD COLUMN "reasoning_tokens" INTEGER NOT NULL DEFAULT 0;
ALTER TABLE "llm_usage" ADD COLUMN "cost" DECIMAL(20,10);
ALTER TABLE "llm_usage" ADD COLUMN "response_id" TEXT;

CREATE INDEX "llm_usage_platform_workspace_created_at_idx" ON "llm_usage"("platform", "workspace", "created_at");
CREATE INDEX "llm_usage_platform_workspace_channel_created_at_idx" ON "llm_usage"("platform", "workspace", "channel", "created_at");
CREATE INDEX "llm_usage_platform_workspace_user_id_created_at_idx" ON "llm_usage"("platform", "workspace", "user_id", "created_at");

-- What a model request in flight may still cost, held against the caps until its usage is stored
-- (the same write deletes it) or, if its process died, until it expires.
CREATE TABLE "spend_holds" (
    "id" BIGSERIAL NOT NULL,
    "platform" TEXT NOT NULL,
    "workspace" TEXT NOT NULL,
    "channel" TEXT NOT NULL,
    "user_id" TEXT NOT NULL,
    "tokens" INTEGER NOT NULL,
    "cost" DECIMAL(20,10),
    "expires_at" TIMESTAMPTZ(6) NOT NULL,

    CONSTRAINT "spend_holds_pkey" PRIMARY KEY ("id")
);

CREATE INDEX "spend_holds_platform_workspace_idx" ON "spend_holds"("platform", "workspace");
