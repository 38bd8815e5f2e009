import { Parser, Renderer, type Tokens } from 'marked';
import { parseMarkdown } from '../../util/markdown.js';
import { escapeHtml, SafeHtml } from './html.js';

// The agent's report as HTML, from the daemon's one markdown parser (src/util/markdown.ts). Report text
// derives from untrusted cluster data (pod logs, events), so the renderer below overrides every way
// marked would pass text through: raw HTML (block or inline) is shown as text, every text run is
// escaped (marked leaves the text after an inline <script> tag unescaped), links to javascript:,
// vbscript:, file: and data: URLs are not made links, links carry rel="nofollow noopener noreferrer",
// and images are shown as links (no request leaves the page for a URL in a report). The page's
// Content-Security-Policy is the second wall.

const LINK_REL = 'nofollow noopener noreferrer';
/** Schemes a report may not link to; checked with whitespace and control characters removed, any case. */
const REFUSED_SCHEME = /^(?:javascript|vbscript|file|data):/;

/** The href to write into the page, or undefined when the URL may not be a link. */
function safeHref(href: string): string | undefined {
  // eslint-disable-next-line no-control-regex -- browsers ignore these inside a scheme; so must the check.
  if (REFUSED_SCHEME.test(href.replace(/[\u0000-\u0020\u007f]/g, '').toLowerCase())) return undefined;
  try {
    return escapeHtml(encodeURI(href).replace(/%25/g, '%'));
  } catch {
    return undefined; // a lone surrogate: not a URL a browser could follow
  }
}

function anchor(href: string, title: string | null | undefined, inner: string): string {
  const safe = safeHref(href);
  if (safe === undefined) return inner;
  const titled = title ? ` title="${escapeHtml(title)}"` : '';
  return `<a href="${safe}" rel="${LINK_REL}"${titled}>${inner}</a>`;
}

class ReportRenderer extends Renderer {
  override html(token: Tokens.HTML | Tokens.Tag): string {
    const text = escapeHtml(token.text);
    return token.block ? `<p>${text.trim()}</p>\n` : text;
  }

  override text(token: Tokens.Text | Tokens.Escape): string {
    return 'tokens' in token && token.tokens ? this.parser.parseInline(token.tokens) : escapeHtml(token.text);
  }

  override link(token: Tokens.Link): string {
    const inner = token.autolink ? escapeHtml(token.text) : this.parser.parseInline(token.tokens);
    return anchor(token.href, token.title, inner);
  }

  override image(token: Tokens.Image): string {
    return anchor(token.href, token.title, escapeHtml(token.text));
  }
}

export function renderMarkdown(text: string): SafeHtml {
  const tokens = parseMarkdown(text);
  // Nesting no report has (the shared parser refuses it): shown as the text it is.
  if (!tokens) return new SafeHtml(`<pre>${escapeHtml(text)}</pre>\n`);
  return new SafeHtml(new Parser({ gfm: true, renderer: new ReportRenderer() }).parse(tokens));
}
