-- A tool's question to the person who started the turn (MCP elicitation, form mode), and its
-- answer: the first one recorded wins, on whichever replica the click landed.
CREATE TABLE "questions" (
    "id" TEXT NOT NULL,
    "inbox_id" BIGINT NOT NULL,
    "platform" TEXT NOT NULL,
    "asked_of" TEXT NOT NULL,
    "request" JSONB NOT NULL,
    "status" TEXT NOT NULL DEFAULT 'open',
    "content" JSONB,
    "answered_by" TEXT,
    "answered_at" TIMESTAMPTZ(6),
    "expires_at" TIMESTAMPTZ(6) NOT NULL,
    "asked_at" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "questions_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "questions_inbox_id_fkey" FOREIGN KEY ("inbox_id") REFERENCES "inbox"("id") ON DELETE CASCADE ON UPDATE CASCADE
);
CREATE INDEX "questions_inbox_id_idx" ON "questions"("inbox_id");

-- A question's prompt is an outbox row of the message whose turn asked, like an approval's.
ALTER TABLE "outbox" ADD COLUMN "question_id" TEXT;
CREATE UNIQUE INDEX "outbox_inbox_id_question_id_key" ON "outbox"("inbox_id", "question_id");
