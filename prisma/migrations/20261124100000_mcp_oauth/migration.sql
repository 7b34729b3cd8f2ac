-- An MCP server's OAuth state (client registration, tokens, a login under way), sealed with
-- MCP_OAUTH_KEY: the database never holds a token in clear.
CREATE TABLE "mcp_oauth" (
    "server" TEXT NOT NULL,
    "sealed" TEXT NOT NULL,
    "updated_at" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "mcp_oauth_pkey" PRIMARY KEY ("server")
);
