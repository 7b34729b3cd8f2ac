-- Sign-ins to MCP servers used with each person's own account (`"identity": "person"` in mcp.json):
-- one row per (server, platform, workspace, person), sealed like mcp_oauth (tokens, client, the
-- authorization server's metadata), with the issuer they are bound to in clear.
CREATE TABLE "mcp_person_oauth" (
    "server" TEXT NOT NULL,
    "platform" TEXT NOT NULL,
    "workspace" TEXT NOT NULL,
    "user_id" TEXT NOT NULL,
    "issuer" TEXT,
    "sealed" TEXT NOT NULL,
    "updated_at" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "mcp_person_oauth_pkey" PRIMARY KEY ("server", "platform", "workspace", "user_id")
);

-- A sign-in link sent to one person: its random `state`, the person and the parked call it was sent
-- for (none for a link asked for ahead of any call, /spool login), and (sealed) the PKCE verifier and
-- what the flow discovered. Used at most once: the callback claims it with a conditional UPDATE.
CREATE TABLE "mcp_sign_in" (
    "state" TEXT NOT NULL,
    "server" TEXT NOT NULL,
    "platform" TEXT NOT NULL,
    "workspace" TEXT NOT NULL,
    "user_id" TEXT NOT NULL,
    "tool_call_id" TEXT,
    "sealed" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "expires_at" TIMESTAMPTZ(6) NOT NULL,
    "used_at" TIMESTAMPTZ(6),

    CONSTRAINT "mcp_sign_in_pkey" PRIMARY KEY ("state")
);

CREATE INDEX "mcp_sign_in_expires_at_idx" ON "mcp_sign_in"("expires_at");
