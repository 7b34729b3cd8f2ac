-- A person signed in to Spool's web pages: one row per browser. The cookie holds a random token;
-- the row is keyed by its SHA-256, so the table alone signs nobody in.
CREATE TABLE "web_sessions" (
    "id" TEXT NOT NULL,
    "platform" TEXT NOT NULL,
    "workspace" TEXT NOT NULL,
    "user_id" TEXT NOT NULL,
    "csrf" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "expires_at" TIMESTAMPTZ(6) NOT NULL,

    CONSTRAINT "web_sessions_pkey" PRIMARY KEY ("id")
);

CREATE INDEX "web_sessions_platform_workspace_user_id_idx" ON "web_sessions"("platform", "workspace", "user_id");
