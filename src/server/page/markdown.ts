import MarkdownIt from 'markdown-it';
import { SafeHtml } from './html.js';

// The agent's report as HTML. Report text derives from untrusted cluster data (pod logs, events), so
// markdown-it runs with raw HTML off (a <script> or an onerror= attribute is shown as text), its link
// check on (javascript:, vbscript:, file: and data: links are not made links), and images off (no
// request leaves the page for a URL in a report). The page's Content-Security-Policy is the second wall.

const md = new MarkdownIt({ html: false, linkify: true, typographer: false });
md.disable('image');
const defaultLinkOpen = md.renderer.rules.link_open;
md.renderer.rules.link_open = (tokens, idx, options, env, self) => {
  tokens[idx]?.attrSet('rel', 'nofollow noopener noreferrer');
  return defaultLinkOpen
    ? defaultLinkOpen(tokens, idx, options, env, self)
    : self.renderToken(tokens, idx, options);
};

export function renderMarkdown(text: string): SafeHtml {
  return new SafeHtml(md.render(text));
}
