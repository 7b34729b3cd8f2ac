/** The pages' one style sheet, served at /web/style.css (the only style a page may use). */
export const STYLE_SHEET = `
:root { color-scheme: light; --ink: #1b1b1f; --muted: #55565c; --line: #d4d5da; --accent: #0b5cad; }
* { box-sizing: border-box; }
body { margin: 0; font: 15px/1.5 system-ui, sans-serif; color: var(--ink); background: #fff; }
header { border-bottom: 1px solid var(--line); padding: 0.5rem 1rem; }
header nav { display: flex; flex-wrap: wrap; align-items: center; justify-content: space-between; gap: 1rem; }
header ul { display: flex; gap: 1rem; list-style: none; margin: 0; padding: 0; }
.brand { margin: 0; font-weight: 600; }
main { padding: 1rem; max-width: 80rem; }
h1 { font-size: 1.4rem; margin: 0.5rem 0 1rem; }
h2 { font-size: 1.1rem; }
a { color: var(--accent); }
.muted, .meta { color: var(--muted); }
.sign-out { display: flex; gap: 0.5rem; align-items: center; }
button, input, select { font: inherit; }
button { padding: 0.25rem 0.75rem; border: 1px solid var(--accent); background: var(--accent); color: #fff; border-radius: 4px; cursor: pointer; }
.content { white-space: pre-wrap; overflow-wrap: anywhere; unicode-bidi: isolate; direction: ltr;
  font: 13px/1.45 ui-monospace, monospace; background: #f6f7f9; border: 1px solid var(--line); padding: 0.75rem;
  max-width: 100%; overflow: auto; }
.unseen { display: inline-block; font-size: 0.75em; color: #8a1c1c; border: 1px solid #e2b4b4; padding: 0 2px; margin: 0 1px; }
.pager { display: flex; gap: 1rem; align-items: center; margin: 0.75rem 0; flex-wrap: wrap; }
form.find, form.filters { display: flex; gap: 0.5rem; align-items: end; flex-wrap: wrap; margin: 0.75rem 0; }
label { display: flex; flex-direction: column; font-size: 0.85rem; color: var(--muted); }
table { border-collapse: collapse; font-size: 13px; }
th, td { border: 1px solid var(--line); padding: 0.2rem 0.5rem; text-align: left; vertical-align: top;
  white-space: pre-wrap; overflow-wrap: anywhere; unicode-bidi: isolate; }
th { background: #eef0f4; }
.json ul { list-style: none; margin: 0; padding-left: 1.25rem; }
.json { font: 13px/1.45 ui-monospace, monospace; unicode-bidi: isolate; overflow-wrap: anywhere; }
.json summary { cursor: pointer; }
.key { color: #6b2a8a; }
.hits li { margin-bottom: 0.5rem; }
.entry { border-left: 3px solid var(--line); padding: 0.25rem 0.75rem; margin: 0.5rem 0; }
.entry.user { border-color: #0b5cad; } .entry.assistant { border-color: #2b7a3d; }
.entry.call { border-color: #8a5a00; } .entry.stop, .entry.edit { border-color: #8a1c1c; }
img.part { max-width: 100%; border: 1px solid var(--line); }
svg.chart { max-width: 100%; height: auto; }
.scrolls { max-width: 100%; overflow-x: auto; }
table.listing td, table.listing th { white-space: normal; overflow-wrap: break-word; }
table.listing ul { margin: 0; padding-left: 1rem; }
`;
