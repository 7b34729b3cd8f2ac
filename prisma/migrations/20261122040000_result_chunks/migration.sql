-- Tool results are indexed whole, in chunks, off the turn. A generated tsvector over a 100k-char
-- prefix cost 40-53 ms per turn to build and could not find anything past the prefix. Now a
-- result is stored with indexed = false; a background indexer (src/store/result-index.ts) cuts it
-- into chunks of 8,000 chars (each overlapping the next by 200, so no word is cut in two), each
-- with its text, its tsvector and its offset, and search indexes whatever is still pending before
-- it runs. A chunk keeps its own text so that an excerpt near the end of a 10 MB result does not
-- walk the whole result (substr counts characters from the start). A derived call and its result
-- (a page, matching lines, search hits: views of other rows) are stored but never indexed or
-- searched.
ALTER TABLE "tool_results" DROP COLUMN "search";
ALTER TABLE "tool_results" ADD COLUMN "indexed" BOOLEAN NOT NULL DEFAULT false;
ALTER TABLE "tool_results" ADD COLUMN "derived" BOOLEAN NOT NULL DEFAULT false;
ALTER TABLE "tool_calls" ADD COLUMN "derived" BOOLEAN NOT NULL DEFAULT false;
-- Before calls carried the flag, these two were the derived tools.
UPDATE "tool_calls" SET "derived" = true WHERE "tool_name" IN ('get_continuation', 'search_history');
UPDATE "tool_results" r SET "derived" = true FROM "tool_calls" c WHERE c."id" = r."call_id" AND c."derived";
CREATE INDEX "tool_results_indexed_id_idx" ON "tool_results" ("indexed", "id");

CREATE TABLE "tool_result_chunks" (
    "result_id" BIGINT NOT NULL,
    -- Where the chunk starts, in UTF-16 code units: get_continuation's offsets.
    "start_offset" INTEGER NOT NULL,
    "channel_key" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(6) NOT NULL,
    "body" TEXT NOT NULL,
    "search" tsvector,
    CONSTRAINT "tool_result_chunks_pkey" PRIMARY KEY ("result_id", "start_offset"),
    CONSTRAINT "tool_result_chunks_result_id_fkey" FOREIGN KEY ("result_id") REFERENCES "tool_results"("id") ON DELETE CASCADE ON UPDATE CASCADE
);
CREATE INDEX "tool_result_chunks_channel_key_created_at_idx" ON "tool_result_chunks" ("channel_key", "created_at" DESC);
CREATE INDEX "tool_result_chunks_search_idx" ON "tool_result_chunks" USING GIN ("search");
-- As for the other search columns (20261122010000_search_statistics): rare words must look rare.
ALTER TABLE "tool_result_chunks" ALTER COLUMN "search" SET STATISTICS 2000;
