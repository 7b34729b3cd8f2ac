-- With default statistics, every word outside the few hundred most common lexemes is estimated
-- to match 0.5% of rows, so the planner walks the (channel, time) index and filters tens of
-- thousands of rows for a rare word (178 ms on 1M tool events, `npm run bench`). Tracking far
-- more lexemes lets it tell rare words (GIN bitmap) from common ones (time index): 0.8 ms / 3 ms.
ALTER TABLE "transcript_messages" ALTER COLUMN "search" SET STATISTICS 2000;
ALTER TABLE "tool_calls" ALTER COLUMN "search" SET STATISTICS 2000;
ALTER TABLE "tool_results" ALTER COLUMN "search" SET STATISTICS 2000;
