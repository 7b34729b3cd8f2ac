-- A reply's links to open in a browser, under its last message (the whole results its turn
-- showed the model as previews): [{ "label": …, "url": … }], kept with the reply so that a reply
-- posted after a crash carries them too.
ALTER TABLE "outbox" ADD COLUMN "links" JSONB;
