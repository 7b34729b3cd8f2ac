-- Binary parts of a tool result (images, audio, blobs). The model reads only a description (kind,
-- type, size); the bytes are kept here when within TOOL_RESULT_BINARY_MAX_BYTES, so no result is
-- lost for being binary. Text columns cannot hold them: PostgreSQL refuses 0x00 in text.
CREATE TABLE "tool_result_binaries" (
    "result_id" BIGINT NOT NULL,
    -- Its place among the result's binary parts, from 0.
    "position" INTEGER NOT NULL,
    "kind" TEXT NOT NULL,
    "mime_type" TEXT,
    "size_bytes" INTEGER NOT NULL,
    -- NULL when over the cap.
    "data" BYTEA,
    CONSTRAINT "tool_result_binaries_pkey" PRIMARY KEY ("result_id", "position"),
    CONSTRAINT "tool_result_binaries_result_id_fkey" FOREIGN KEY ("result_id") REFERENCES "tool_results"("id") ON DELETE CASCADE ON UPDATE CASCADE
);
