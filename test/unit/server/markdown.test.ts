import { describe, expect, it } from 'vitest';
import { html } from '../../../src/server/page/html.js';
import { renderMarkdown } from '../../../src/server/page/markdown.js';

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

  it('escapes every interpolated value in page templates', () => {
    const value = '"><script>alert(1)</script>';
    expect(html`<td title="${value}">${value}</td>`.html).toBe(
      '<td title="&quot;&gt;&lt;script&gt;alert(1)&lt;/script&gt;">&quot;&gt;&lt;script&gt;alert(1)&lt;/script&gt;</td>',
    );
  });
});
