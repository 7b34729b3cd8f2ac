-- Discord's gateway split into shards, shared by the replicas (issue 54). Each shard is held under
-- a lease of its own lanes row (platform 'discord-gateway', workspace the application, channel the
-- generation, thread the shard id), by the lanes' statements.

-- The shard count every replica connects with: changing it bumps the generation, in one statement.
-- The day's identifies, as Discord last said them, counted down by each identify.
CREATE TABLE "discord_gateways" (
    "application_id" TEXT NOT NULL,
    "shard_count" INTEGER NOT NULL,
    "generation" BIGINT NOT NULL DEFAULT 1,
    "max_concurrency" INTEGER NOT NULL DEFAULT 1,
    "identifies_total" INTEGER NOT NULL,
    "identifies_left" INTEGER NOT NULL,
    "identifies_reset_at" TIMESTAMPTZ(6) NOT NULL,
    "updated_at" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "discord_gateways_pkey" PRIMARY KEY ("application_id")
);

-- The replicas alive, each until it stops renewing: the shards are shared among them.
CREATE TABLE "discord_replicas" (
    "application_id" TEXT NOT NULL,
    "holder" TEXT NOT NULL,
    "expires_at" TIMESTAMPTZ(6) NOT NULL,

    CONSTRAINT "discord_replicas_pkey" PRIMARY KEY ("application_id", "holder")
);

-- A shard's session, kept with its lease: the next holder resumes it.
CREATE TABLE "discord_shard_sessions" (
    "lane_id" BIGINT NOT NULL,
    "session_id" TEXT NOT NULL,
    "sequence" BIGINT NOT NULL,
    "resume_url" TEXT NOT NULL,
    "shard_count" INTEGER NOT NULL,
    "updated_at" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "discord_shard_sessions_pkey" PRIMARY KEY ("lane_id")
);

-- Each identify bucket's next free moment (shard_id % max_concurrency; one identify each 5 s).
CREATE TABLE "discord_identify_buckets" (
    "application_id" TEXT NOT NULL,
    "bucket" INTEGER NOT NULL,
    "next_at" TIMESTAMPTZ(6) NOT NULL,

    CONSTRAINT "discord_identify_buckets_pkey" PRIMARY KEY ("application_id", "bucket")
);
