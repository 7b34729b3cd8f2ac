-- Slack installations, one per workspace (`team:T…`) or per Enterprise Grid organization for an
-- org-wide install (`enterprise:E…`): Bolt's Installation, sealed under MCP_OAUTH_KEY with
-- the id as additional data (never a token in clear). `expires_at` is the bot token's expiry when the
-- app rotates tokens: the refresh takes this row's lock, so one replica spends a refresh token once.
CREATE TABLE "slack_installation" (
    "id" TEXT NOT NULL,
    "enterprise_id" TEXT,
    "team_id" TEXT,
    "sealed" TEXT NOT NULL,
    "expires_at" TIMESTAMPTZ(6),
    "updated_at" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "slack_installation_pkey" PRIMARY KEY ("id")
);

-- The workspaces seen under an org-wide install: a background post names only its workspace.
CREATE TABLE "slack_team" (
    "team_id" TEXT NOT NULL,
    "enterprise_id" TEXT NOT NULL,

    CONSTRAINT "slack_team_pkey" PRIMARY KEY ("team_id")
);

-- An "Add to Slack" link's `state`: random, used at most once (claimed with a conditional UPDATE),
-- and only until it expires. Its install options (scopes, redirect) hold no secret.
CREATE TABLE "slack_install_state" (
    "state" TEXT NOT NULL,
    "install_options" JSONB NOT NULL,
    "created_at" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "expires_at" TIMESTAMPTZ(6) NOT NULL,
    "used_at" TIMESTAMPTZ(6),

    CONSTRAINT "slack_install_state_pkey" PRIMARY KEY ("state")
);

CREATE INDEX "slack_install_state_expires_at_idx" ON "slack_install_state"("expires_at");
