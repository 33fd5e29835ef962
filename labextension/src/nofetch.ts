/**
 * Nothing fetches by itself: the allow-list pass over rendered Markdown and transcript images.
 *
 * Owns `safeFragment` (parses sanitized HTML in an inert <template>, where nothing loads, and
 * rebuilds it in the page from an allow-list of tags and attributes), `imageNode` (inline
 * `data:` rasters, a placeholder otherwise) and `placeholder` (the visible "🖼 image from HOST —
 * click to open" link standing in for a remote resource). Same rules as the Python side
 * (penguin_jupyter/notebook/transcript/no_fetch_html.py); Markdown parsing and the first sanitizer stay
 * with JupyterLab. See docs/no-fetch.md.
 */

const HTML_NS = 'http://www.w3.org/1999/xhtml';
const RASTER_DATA = /^data:image\/(?:png|jpeg|jpg|gif|webp);base64,[A-Za-z0-9+/=\s]*$/i;
const SVG_DATA = /^data:image\/svg\+xml(?:;charset=[\w-]+)?(;base64)?,([\s\S]*)$/i;
const SVG_MAX_CHARS = 2_000_000;
// In an SVG: an attribute that names anything but a fragment of the same document, a CSS url()
// or image-set() to anything but a fragment, an @import, or a CSS escape (which could spell one).
const SVG_REFERENCE =
  /(?<![\w-])(?:href|src|srcset|poster|background|data|action)\s*=(?!\s*["']?\s*#)|url\((?!\s*["']?\s*#)|image-set|@import|\\[0-9a-f]/i;
const SAFE_HREF = /^(?:https?:\/\/|mailto:|#)/i;
const EMBEDDED_URL = /(?:https?:)?\/\/[^\s'"<>)]+/gi;
const ABSOLUTE = /^(?:[a-z][a-z0-9+.-]*:|\/\/)/i;
const CSS_URL = /url\(\s*['"]?([^'")\s]+)|@import\s+['"]([^'"]+)|image-set\(\s*['"]([^'"]+)/gi;
const MAX_PLACEHOLDERS = 64; // per string; more are counted in one closing note

const ALLOWED_TAGS = new Set([
  'p', 'br', 'hr', 'h1', 'h2', 'h3', 'h4', 'h5', 'h6', 'em', 'strong', 'b', 'i', 'u', 's',
  'del', 'ins', 'mark', 'small', 'sub', 'sup', 'code', 'pre', 'kbd', 'samp', 'var',
  'blockquote', 'q', 'abbr', 'dfn', 'ul', 'ol', 'li', 'dl', 'dt', 'dd', 'table', 'thead',
  'tbody', 'tfoot', 'tr', 'th', 'td', 'caption', 'colgroup', 'col', 'a', 'img', 'span',
  'div', 'details', 'summary', 'input', 'figure', 'figcaption', 'wbr'
]);
const VOID = new Set(['br', 'hr', 'img', 'input', 'col', 'wbr']);
const GLOBAL_ATTRS = new Set(['class', 'title', 'lang', 'dir']);
const TAG_ATTRS: Record<string, Set<string>> = {
  a: new Set(['href']),
  img: new Set(['src', 'alt', 'width', 'height']),
  input: new Set(['type', 'checked', 'disabled']),
  td: new Set(['align', 'colspan', 'rowspan']),
  th: new Set(['align', 'colspan', 'rowspan', 'scope']),
  col: new Set(['span']),
  ol: new Set(['start', 'type', 'reversed']),
  li: new Set(['value']),
  details: new Set(['open'])
};
// Elements whose content is never copied (embedded documents, media, raw text, foreign content).
const OPAQUE = new Set([
  'script', 'style', 'template', 'noscript', 'iframe', 'frame', 'frameset', 'object', 'embed',
  'applet', 'video', 'audio', 'picture', 'svg', 'math', 'canvas', 'head', 'title', 'textarea',
  'select', 'xmp', 'noembed', 'noframes', 'plaintext', 'map'
]);
const URL_ATTRS = new Set([
  'src', 'href', 'xlink:href', 'srcset', 'poster', 'background', 'data', 'action', 'formaction',
  'longdesc', 'lowsrc', 'dynsrc', 'ping', 'manifest', 'codebase', 'archive', 'icon', 'profile',
  'cite', 'imagesrcset', 'content'
]);
const KIND: Record<string, string> = {
  img: 'image', image: 'image', picture: 'image', source: 'media', video: 'video', audio: 'audio',
  track: 'media', iframe: 'page', frame: 'page', object: 'object', embed: 'object', applet: 'object',
  link: 'stylesheet', style: 'style resource', svg: 'SVG resource', use: 'SVG resource',
  input: 'image', meta: 'page', script: 'script'
};
const STYLE_PROPS = new Set([
  'color', 'text-align', 'max-width', 'font-weight', 'font-style', 'font-size', 'font-family',
  'white-space', 'word-break', 'margin', 'padding', 'border', 'border-left', 'border-radius',
  'vertical-align'
]);
const STYLE_VALUE = /^(?:[#\w\s.,%'"+\-/!)]|(?:var|rgba?|hsla?|calc)\()*$/i;

type Found = [url: string, kind: string];

/**
 * A `data:` PNG, JPEG, GIF or WebP, or an SVG that references nothing outside itself (e.g. a
 * Mermaid diagram): shown inline, it loads nothing.
 */
export function isInlineImage(src: string): boolean {
  src = src.trim();
  if (RASTER_DATA.test(src)) {
    return true;
  }
  const match = SVG_DATA.exec(src);
  if (!match || src.length > SVG_MAX_CHARS) {
    return false;
  }
  let svg: string;
  try {
    svg = match[1]
      ? new TextDecoder().decode(Uint8Array.from(atob(match[2].replace(/\s+/g, '')), c => c.charCodeAt(0)))
      : decodeURIComponent(match[2]);
  } catch {
    return false;
  }
  return !SVG_REFERENCE.test(svg);
}

export function urlHost(url: string): string {
  try {
    return new URL(url.trim()).hostname || 'an unknown place';
  } catch {
    return 'an unknown place';
  }
}

function label(url: string, kind: string): string {
  return `${kind.includes('image') ? '🖼' : '🔗'} ${kind} from ${urlHost(url)}`;
}

/** A visible stand-in for a remote resource; an http(s) URL opens in a new tab on click. */
export function placeholder(url: string, kind = 'image', insideLink = false): HTMLElement {
  url = url.trim();
  const span = document.createElement('span');
  span.className = 'pg-remote';
  if (/^data:/i.test(url)) {
    // e.g. an SVG data: URL (it may reference URLs itself)
    const mime = url.slice(5).split(',')[0].split(';')[0].slice(0, 60) || 'data';
    span.title = mime;
    span.textContent = `🖼 ${mime} not shown`;
    return span;
  }
  if (/^https?:\/\//i.test(url) && !insideLink) {
    const link = document.createElement('a');
    link.className = 'pg-remote';
    link.href = url;
    link.target = '_blank';
    link.rel = 'noopener noreferrer nofollow';
    link.title = url;
    link.textContent = `${label(url, kind)} — click to open`;
    return link;
  }
  span.title = url.slice(0, 500);
  span.textContent = `${label(url, kind)} (not loaded)`;
  return span;
}

/** An image of a transcript: inline when `isInlineImage`, else a placeholder. */
export function imageNode(src: string): HTMLElement {
  if (isInlineImage(src)) {
    const img = document.createElement('img');
    img.src = src.trim();
    img.alt = 'image';
    img.className = 'pg-image';
    return img;
  }
  return placeholder(src);
}

function attrUrls(name: string, value: string): string[] {
  value = value.trim();
  if (name === 'style') {
    return Array.from(value.matchAll(CSS_URL), m => m[1] || m[2] || m[3]).filter(Boolean);
  }
  if (name === 'srcset' || name === 'imagesrcset') {
    return value.split(',').map(part => part.trim().split(/\s+/)[0]).filter(Boolean);
  }
  if (name === 'srcdoc') {
    return value.match(EMBEDDED_URL) || [];
  }
  if (name === 'content') {
    const match = /url\s*=\s*['"]?([^'"\s]+)/i.exec(value);
    return match ? [match[1]] : [];
  }
  if (!value || value.startsWith('#') || value.toLowerCase().startsWith('data:')) {
    return [];
  }
  return URL_ATTRS.has(name) || ABSOLUTE.test(value) ? [value] : [];
}

function elementUrls(element: Element): Found[] {
  const tag = element.localName.toLowerCase();
  const found: Found[] = [];
  for (const attr of Array.from(element.attributes)) {
    const name = attr.name.toLowerCase();
    const kind = name === 'background' || name === 'style' ? 'background image' : KIND[tag] || 'resource';
    attrUrls(name, attr.value).forEach(url => found.push([url, kind]));
  }
  if (tag === 'style') {
    attrUrls('style', element.textContent || '').forEach(url => found.push([url, 'style resource']));
  }
  return found;
}

function subtreeUrls(root: Element): Found[] {
  const found = elementUrls(root);
  root.querySelectorAll('*').forEach(child => found.push(...elementUrls(child)));
  return found;
}

function safeStyle(value: string): string {
  return value
    .split(';')
    .map(declaration => {
      const at = declaration.indexOf(':');
      const prop = declaration.slice(0, at).trim().toLowerCase();
      const val = declaration.slice(at + 1).trim();
      return at > 0 && STYLE_PROPS.has(prop) && val && !val.includes('\\') && STYLE_VALUE.test(val)
        ? `${prop}:${val}`
        : '';
    })
    .filter(Boolean)
    .join(';');
}

class Rebuilder {
  private placeholders = 0;
  hidden = 0;

  constructor(private doc: Document) {}

  private addPlaceholders(target: Node, found: Found[], insideLink: boolean): void {
    const seen = new Set<string>();
    for (const [url, kind] of found) {
      if (!url || seen.has(url)) {
        continue;
      }
      seen.add(url);
      if (this.placeholders >= MAX_PLACEHOLDERS) {
        this.hidden += 1;
        continue;
      }
      this.placeholders += 1;
      target.appendChild(placeholder(url, kind, insideLink));
    }
  }

  copyChildren(source: Node, target: Node, insideLink: boolean): void {
    for (const child of Array.from(source.childNodes)) {
      if (child.nodeType === Node.TEXT_NODE) {
        target.appendChild(this.doc.createTextNode(child.textContent || ''));
      } else if (child.nodeType === Node.ELEMENT_NODE) {
        this.copyElement(child as Element, target, insideLink);
      }
      // comments, processing instructions: dropped
    }
  }

  private copyElement(source: Element, target: Node, insideLink: boolean): void {
    const tag = source.localName.toLowerCase();
    const html = source.namespaceURI === HTML_NS;
    if (!html || OPAQUE.has(tag)) {
      this.addPlaceholders(target, subtreeUrls(source), insideLink);
      return;
    }
    if (!ALLOWED_TAGS.has(tag)) {
      // Unknown element: its text stays, the element and its attributes go.
      this.addPlaceholders(target, elementUrls(source), insideLink);
      this.copyChildren(source, target, insideLink);
      return;
    }
    if (tag === 'img' && !isInlineImage(source.getAttribute('src') || '')) {
      const found = elementUrls(source);
      this.addPlaceholders(target, found.length ? found : [[source.getAttribute('src') || '', 'image']], insideLink);
      return;
    }
    if (tag === 'input' && (source.getAttribute('type') || '').toLowerCase() !== 'checkbox') {
      this.addPlaceholders(target, elementUrls(source), insideLink);
      return;
    }
    const copy = this.doc.createElement(tag);
    const allowed = TAG_ATTRS[tag];
    const dropped: Found[] = [];
    for (const attr of Array.from(source.attributes)) {
      const name = attr.name.toLowerCase();
      if (name === 'href') {
        if (tag === 'a' && SAFE_HREF.test(attr.value.trim()) && !insideLink) {
          copy.setAttribute('href', attr.value.trim());
          copy.setAttribute('target', '_blank');
          copy.setAttribute('rel', 'noopener noreferrer nofollow');
        }
      } else if (name === 'style') {
        const style = safeStyle(attr.value);
        if (style) {
          copy.setAttribute('style', style);
        }
        dropped.push(...attrUrls('style', attr.value).map((url): Found => [url, 'background image']));
      } else if (GLOBAL_ATTRS.has(name) || (allowed && allowed.has(name))) {
        copy.setAttribute(name, attr.value);
      } else {
        const kind = name === 'background' ? 'background image' : KIND[tag] || 'resource';
        dropped.push(...attrUrls(name, attr.value).map((url): Found => [url, kind]));
      }
    }
    target.appendChild(copy);
    const inLink = insideLink || (tag === 'a' && copy.hasAttribute('href'));
    this.addPlaceholders(VOID.has(tag) ? target : copy, dropped, inLink);
    this.copyChildren(source, copy, inLink);
  }
}

/**
 * `html` rebuilt in `doc` from the allow-list: nothing in it loads a URL until the user clicks.
 *
 * The string is parsed in an inert <template> (no image, stylesheet or frame loads there), then
 * only allowed tags with allowed attributes are created in `doc`: `href` on links with
 * http(s)/mailto/`#`, `src` on images only for `data:` rasters, `style` only with plain
 * declarations. Remote images, media, frames, objects, stylesheets, SVG and CSS `url()`s become
 * placeholders naming the host; unknown elements are dropped keeping their text, opaque ones
 * (`<style>`, `<svg>`, `<iframe>`…) with their content.
 */
export function safeFragment(html: string, doc: Document = document): DocumentFragment {
  const template = doc.createElement('template');
  template.innerHTML = html;
  const out = doc.createDocumentFragment();
  const rebuilder = new Rebuilder(doc);
  rebuilder.copyChildren(template.content, out, false);
  if (rebuilder.hidden) {
    const note = doc.createElement('span');
    note.className = 'pg-remote';
    note.textContent = `… ${rebuilder.hidden} more remote resources not loaded`;
    out.appendChild(note);
  }
  return out;
}

/** `safeFragment` as a string, built in an inert document (for a pass before another sanitizer). */
export function safeHtml(html: string): string {
  const inert = document.implementation.createHTMLDocument('');
  const holder = inert.createElement('div');
  holder.appendChild(safeFragment(html, inert));
  return holder.innerHTML;
}
