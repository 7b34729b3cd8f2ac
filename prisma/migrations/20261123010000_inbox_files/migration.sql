-- Files shared with an inbound message, as the platform listed them (name, type, declared size,
-- URL): kept with the message, so that whichever replica answers it fetches them.
ALTER TABLE "inbox" ADD COLUMN "files" JSONB;
