-- Search indexes cover the first 100,000 characters of each text: a tsvector is capped at 1 MB,
-- and tool results may be far larger. Everything but letters and digits becomes a space first:
-- the default parser would keep "/srv/a_b.md" or "list_directory" as one token, and people
-- search for the words inside them. Queries match word prefixes ('simple' does not stem).

-- CreateTable
CREATE TABLE "conversations" (
    "id" UUID NOT NULL,
    "platform" TEXT NOT NULL,
    "workspace" TEXT NOT NULL,
    "channel" TEXT NOT NULL,
    "thread" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "conversations_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "transcript_messages" (
    "id" BIGSERIAL NOT NULL,
    "conversation_id" UUID NOT NULL,
    "channel_key" TEXT NOT NULL,
    "turn" INTEGER NOT NULL,
    "role" TEXT NOT NULL,
    "content" TEXT NOT NULL,
    "tool_calls" JSONB,
    "tool_call_id" TEXT,
    "created_at" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "search" tsvector GENERATED ALWAYS AS (
        CASE WHEN "role" IN ('user', 'assistant') THEN to_tsvector('simple'::regconfig, regexp_replace(left("content", 100000), '[^[:alnum:]]+', ' ', 'g')) END
    ) STORED,

    CONSTRAINT "transcript_messages_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "tool_calls" (
    "id" BIGSERIAL NOT NULL,
    "conversation_id" UUID NOT NULL,
    "channel_key" TEXT NOT NULL,
    "message_id" BIGINT NOT NULL,
    "tool_call_id" TEXT NOT NULL,
    "tool_name" TEXT NOT NULL,
    "arguments" TEXT NOT NULL,
    "turn" INTEGER NOT NULL,
    "created_at" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "search" tsvector GENERATED ALWAYS AS (
        to_tsvector('simple'::regconfig, regexp_replace("tool_name" || ' ' || left("arguments", 100000), '[^[:alnum:]]+', ' ', 'g'))
    ) STORED,

    CONSTRAINT "tool_calls_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "tool_results" (
    "id" BIGSERIAL NOT NULL,
    "call_id" BIGINT NOT NULL,
    "channel_key" TEXT NOT NULL,
    "tool_name" TEXT NOT NULL,
    "content" TEXT NOT NULL,
    "content_chars" INTEGER NOT NULL,
    "is_error" BOOLEAN NOT NULL,
    "duration_ms" INTEGER NOT NULL,
    "created_at" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "search" tsvector GENERATED ALWAYS AS (
        to_tsvector('simple'::regconfig, regexp_replace("tool_name" || ' ' || left("content", 100000), '[^[:alnum:]]+', ' ', 'g'))
    ) STORED,

    CONSTRAINT "tool_results_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "llm_usage" (
    "id" BIGSERIAL NOT NULL,
    "conversation_id" UUID NOT NULL,
    "model" TEXT NOT NULL,
    "prompt_tokens" INTEGER NOT NULL,
    "completion_tokens" INTEGER NOT NULL,
    "total_tokens" INTEGER NOT NULL,
    "created_at" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "llm_usage_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE UNIQUE INDEX "conversations_platform_workspace_channel_thread_key" ON "conversations"("platform", "workspace", "channel", "thread");

-- CreateIndex
CREATE INDEX "transcript_messages_conversation_id_id_idx" ON "transcript_messages"("conversation_id", "id");

-- CreateIndex
CREATE INDEX "transcript_messages_channel_key_created_at_idx" ON "transcript_messages"("channel_key", "created_at" DESC);

-- CreateIndex
CREATE INDEX "transcript_messages_search_idx" ON "transcript_messages" USING GIN ("search");

-- CreateIndex
CREATE UNIQUE INDEX "tool_calls_conversation_id_tool_call_id_key" ON "tool_calls"("conversation_id", "tool_call_id");

-- CreateIndex
CREATE INDEX "tool_calls_channel_key_created_at_idx" ON "tool_calls"("channel_key", "created_at" DESC);

-- CreateIndex
CREATE INDEX "tool_calls_channel_key_tool_call_id_idx" ON "tool_calls"("channel_key", "tool_call_id");

-- CreateIndex
CREATE INDEX "tool_calls_search_idx" ON "tool_calls" USING GIN ("search");

-- CreateIndex
CREATE UNIQUE INDEX "tool_results_call_id_key" ON "tool_results"("call_id");

-- CreateIndex
CREATE INDEX "tool_results_channel_key_created_at_idx" ON "tool_results"("channel_key", "created_at" DESC);

-- CreateIndex
CREATE INDEX "tool_results_search_idx" ON "tool_results" USING GIN ("search");

-- CreateIndex
CREATE INDEX "llm_usage_conversation_id_idx" ON "llm_usage"("conversation_id");

-- AddForeignKey
ALTER TABLE "transcript_messages" ADD CONSTRAINT "transcript_messages_conversation_id_fkey" FOREIGN KEY ("conversation_id") REFERENCES "conversations"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "tool_calls" ADD CONSTRAINT "tool_calls_conversation_id_fkey" FOREIGN KEY ("conversation_id") REFERENCES "conversations"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "tool_calls" ADD CONSTRAINT "tool_calls_message_id_fkey" FOREIGN KEY ("message_id") REFERENCES "transcript_messages"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "tool_results" ADD CONSTRAINT "tool_results_call_id_fkey" FOREIGN KEY ("call_id") REFERENCES "tool_calls"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "llm_usage" ADD CONSTRAINT "llm_usage_conversation_id_fkey" FOREIGN KEY ("conversation_id") REFERENCES "conversations"("id") ON DELETE CASCADE ON UPDATE CASCADE;
