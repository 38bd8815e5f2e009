import { describe, expect, it } from 'vitest';
import { html } from '../../../src/server/page/html.js';
import { renderMarkdown } from '../../../src/server/page/report-html.js';

// The report is untrusted text: rendered markdown must carry no script, handler or script URL.

describe('report rendering', () => {
  it('renders headings, tables, code and links', () => {
    const out = renderMarkdown(
      '# Title\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\n`kubectl get pods`\n\n[runbook](https://r.example/x)',
    ).html;
    expect(out).toContain('<h1>Title</h1>');
    expect(out).toContain('<td>1</td>');
    expect(out).toContain('<code>kubectl get pods</code>');
    expect(out).toContain('<a href="https://r.example/x" rel="nofollow noopener noreferrer">runbook</a>');
  });

  it('shows raw HTML as text: a script tag and an onerror attribute stay inert', () => {
    const out = renderMarkdown('<script>window.x=1</script>\n\n<img src=x onerror="window.x=1">').html;
    expect(out).not.toMatch(/<script|<img/i);
    expect(out).toContain('&lt;script&gt;window.x=1&lt;/script&gt;');
    expect(out).toContain('&lt;img src=x onerror=&quot;window.x=1&quot;&gt;');
  });

  it('makes no link of javascript:, vbscript: or data: URLs, whatever their case', () => {
    const out = renderMarkdown(
      '[a](javascript:alert(1)) [b](JaVaScRiPt:alert(1)) [c](vbscript:msgbox(1)) [d](data:text/html;base64,PHNjcmlwdD4=)',
    ).html;
    expect(out).not.toMatch(/href=/i);
  });

  it('loads no image from a report (images are shown as links)', () => {
    expect(renderMarkdown('![pixel](https://tracker.example/p.gif)').html).not.toMatch(/<img/i);
  });

  it('escapes the text after an inline script tag (marked would pass it through as raw)', () => {
    const out = renderMarkdown('a <script> <img src=x onerror=alert(1)//').html;
    expect(out).not.toMatch(/<img|<script/i);
    expect(out).toContain('&lt;img src=x onerror=alert(1)//');
  });

  it('shows an HTML block, inline tags and HTML in a table cell as text', () => {
    const out = renderMarkdown(
      '<div>\n<script>alert(1)</script>\n</div>\n\ntext <b onmouseover="alert(1)">bold</b>\n\n| a |\n|---|\n| <img src=x onerror=1> |',
    ).html;
    expect(out).not.toMatch(/<(div|script|b|img)[\s>]/i);
    expect(out).toContain('&lt;b onmouseover=&quot;alert(1)&quot;&gt;bold&lt;/b&gt;');
    expect(out).toContain('<td>&lt;img src=x onerror=1&gt;</td>');
  });

  it('refuses script URLs however they are written: autolinks, whitespace, reference links, data: in a table', () => {
    const out = renderMarkdown(
      '<javascript:alert(1)> [z]( JAVASCRIPT:alert(1)) [ref]\n\n| q |\n|---|\n| [d](data:text/html,x) |\n\n[ref]: javascript:alert(1)',
    ).html;
    expect(out).not.toMatch(/href=/i);
  });

  it('keeps an entity-encoded scheme inert: the href is escaped, so the browser sees no javascript: scheme', () => {
    const out = renderMarkdown('[x](jav&#x61;script:alert(1))').html;
    expect(out).toContain('href="jav&amp;#x61;script:alert(1)"');
  });

  it('cannot break out of a link title or href attribute', () => {
    const out = renderMarkdown('[t](https://a.example/"onmouseover="x "a\\" onmouseover=\\"x")').html;
    expect(out).not.toMatch(/"\s*onmouseover=/i);
  });

  it('links bare URLs with the same rel, and escapes code blocks', () => {
    const out = renderMarkdown(
      'see https://grafana.example/d/x?a=1&b=2\n\n```\n<script>alert(1)</script>\n```',
    ).html;
    expect(out).toContain(
      '<a href="https://grafana.example/d/x?a=1&amp;b=2" rel="nofollow noopener noreferrer">https://grafana.example/d/x?a=1&amp;b=2</a>',
    );
    expect(out).toContain('<pre><code>&lt;script&gt;alert(1)&lt;/script&gt;\n</code></pre>');
  });

  it('shows nesting deeper than any report as escaped text instead of parsing it', () => {
    const out = renderMarkdown(`${'- '.repeat(40)}deep <script>`).html;
    expect(out).toMatch(/^<pre>/);
    expect(out).toContain('deep &lt;script&gt;');
  });

  it('escapes every interpolated value in page templates', () => {
    const value = '"><script>alert(1)</script>';
    expect(html`<td title="${value}">${value}</td>`.html).toBe(
      '<td title="&quot;&gt;&lt;script&gt;alert(1)&lt;/script&gt;">&quot;&gt;&lt;script&gt;alert(1)&lt;/script&gt;</td>',
    );
  });
});
