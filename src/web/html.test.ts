import { describe, expect, it } from 'vitest';
import { html, Html } from './html.ts';
import { inert } from './inert.ts';

describe('html', () => {
  it('escapes every value but a template of its own', () => {
    const hostile = `<script>alert("x")</script><img src=x onerror='y'>&amp;`;
    const page = html`<p title="${hostile}">${hostile}${html`<b>${hostile}</b>`}</p>`;
    expect(page.text).toBe(
      '<p title="&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;&lt;img src=x onerror=&#39;y&#39;&gt;&amp;amp;">' +
        '&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;&lt;img src=x onerror=&#39;y&#39;&gt;&amp;amp;' +
        '<b>&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;&lt;img src=x onerror=&#39;y&#39;&gt;&amp;amp;</b></p>',
    );
  });

  it('joins lists and leaves out nothing but null, undefined and false', () => {
    expect(html`${['<a>', html`<hr />`, 0, null, undefined, false, true]}`.text).toBe(
      '&lt;a&gt;<hr />0true',
    );
  });

  it('cannot be built around the template', () => {
    expect(() => new Html(Symbol('html') as never, '<script>')).toThrow(TypeError);
  });
});

describe('inert', () => {
  it('names each control, bidi and zero-width character where it stands', () => {
    const text = 'a\u202Eevil\u2066b\u0000c\u200Bd\u2028e\tf\ng';
    expect(inert(text).text).toBe(
      'a<span class="unseen" title="U+202E">U+202E</span>evil' +
        '<span class="unseen" title="U+2066">U+2066</span>b' +
        '<span class="unseen" title="U+0000">U+0000</span>c' +
        '<span class="unseen" title="U+200B">U+200B</span>d' +
        '<span class="unseen" title="U+2028">U+2028</span>e\tf\ng',
    );
  });
});
