-- A reply longer than a few messages is posted as one file with a short message: the file is part
-- of the outbox row, so that a crash between its upload and its record never posts it twice.
ALTER TABLE "outbox" ADD COLUMN "file_name" TEXT;
ALTER TABLE "outbox" ADD COLUMN "file_content" TEXT;
-- A code-only reply's language, for the platform's highlighting.
ALTER TABLE "outbox" ADD COLUMN "file_language" TEXT;
