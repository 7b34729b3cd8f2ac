-- Tool calls a server runs as tasks (MCP tasks): kept by the call's id before the turn waits on one,
-- so that a restart or another replica follows the same task instead of calling the tool again.
CREATE TABLE "tool_tasks" (
    "tool_call_id" TEXT NOT NULL,
    "server" TEXT NOT NULL,
    "task_id" TEXT NOT NULL,
    "conversation_key" TEXT NOT NULL,
    "platform" TEXT NOT NULL,
    "workspace" TEXT NOT NULL,
    "channel" TEXT NOT NULL,
    "thread" TEXT NOT NULL,
    "status" TEXT NOT NULL DEFAULT 'working',
    "created_at" TIMESTAMPTZ(6) NOT NULL DEFAULT now(),
    "finished_at" TIMESTAMPTZ(6),

    CONSTRAINT "tool_tasks_pkey" PRIMARY KEY ("tool_call_id")
);

CREATE INDEX "tool_tasks_open_idx" ON "tool_tasks" ("conversation_key");

-- A call found by its own id alone (a sign-in's redirect wakes the message whose turn waits on it).
CREATE INDEX "tool_calls_tool_call_id_idx" ON "tool_calls" ("tool_call_id");
