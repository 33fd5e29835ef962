/**
 * No output declares HTTP headers: the page's guard against `<meta http-equiv="refresh">`.
 *
 * What a live kernel publishes renders as trusted, and a `<meta http-equiv="refresh"
 * content="0;url=https://elsewhere/?data">` in it navigates this page there — a request nobody
 * clicked, carrying what its URL holds. A Content-Security-Policy has no directive for
 * navigation, and its `sandbox` directive stops a meta refresh only without `allow-scripts`,
 * which JupyterLab needs (measured, docs/security.md "Is the browser hardened?"). Chromium acts
 * on the element the moment it is connected to the document, so removing it afterwards (a
 * MutationObserver) is too late: this guard takes `http-equiv` off every `<meta>` before it is
 * connected, in the DOM's own insertion methods and HTML-string setters (patched once, when the
 * plugin activates — before any notebook renders). A meta without `http-equiv` does nothing.
 *
 * Owns `installNoRefreshGuard` and the plugin whose id the sandboxed kernel's provisioner looks
 * for (package.json `penguin.pageGuards`, kernel_sandbox/browser_judge.py). What renders the
 * outputs stays JupyterLab's and the widgets'.
 */

import { JupyterFrontEndPlugin } from '@jupyterlab/application';

export const NO_REFRESH_PLUGIN = 'penguin-jupyter:no-declarative-refresh';
const HTTP_EQUIV = /http-equiv/i;
const INSTALLED = Symbol.for('penguin-jupyter.no-refresh-guard');

type AnyFunction = (this: unknown, ...args: unknown[]) => unknown;

/** Take `http-equiv` off every meta in `node` (an element or a fragment) and its subtree. */
function neutralize(node: unknown): void {
  if (node instanceof Element) {
    if (node.localName === 'meta') {
      node.removeAttribute('http-equiv');
    }
    if (node.firstElementChild !== null) {
      const metas = node.getElementsByTagName('meta'); // live, and cached by the browser
      for (let i = 0; i < metas.length; i++) {
        metas[i].removeAttribute('http-equiv');
      }
    }
  } else if (node instanceof DocumentFragment) {
    node.querySelectorAll('meta').forEach(meta => meta.removeAttribute('http-equiv'));
  }
}

/** A detached element that parses HTML as `context` would. */
function parsingContext(context: Element | null): Element {
  const doc = context?.ownerDocument ?? document;
  if (context === null || context.localName.includes('-')) {
    return doc.createElement('div'); // a custom element parses as a div does, and is not constructed
  }
  return doc.createElementNS(context.namespaceURI, context.localName);
}

function guardArguments(proto: object, name: string): void {
  const original = (proto as Record<string, unknown>)[name];
  if (typeof original !== 'function') {
    return;
  }
  const guarded = function (this: unknown, ...args: unknown[]): unknown {
    args.forEach(neutralize);
    return (original as AnyFunction).apply(this, args);
  };
  Object.defineProperty(proto, name, { value: guarded, writable: true, configurable: true });
}

/** Parse `html` detached, as `context` would, with every meta neutralized: its nodes. */
function parsedNodes(html: string, context: Element | null, innerHTML: (this: Element, v: string) => void): Node[] {
  const holder = parsingContext(context);
  innerHTML.call(holder, html);
  neutralize(holder);
  return Array.from(holder.childNodes);
}

/** Patch the page's DOM once; later calls do nothing. */
export function installNoRefreshGuard(): void {
  const marks = globalThis as unknown as Record<symbol, boolean>;
  if (marks[INSTALLED]) {
    return;
  }
  marks[INSTALLED] = true;
  for (const name of ['appendChild', 'insertBefore', 'replaceChild']) {
    guardArguments(Node.prototype, name);
  }
  for (const name of ['append', 'prepend', 'before', 'after', 'replaceWith', 'replaceChildren', 'insertAdjacentElement']) {
    guardArguments(Element.prototype, name);
  }
  for (const name of ['before', 'after', 'replaceWith']) {
    guardArguments(CharacterData.prototype, name);
  }
  for (const name of ['append', 'prepend', 'replaceChildren']) {
    guardArguments(Document.prototype, name);
  }
  guardArguments(Range.prototype, 'insertNode');
  guardArguments(Range.prototype, 'surroundContents');

  const inner = Object.getOwnPropertyDescriptor(Element.prototype, 'innerHTML');
  const outer = Object.getOwnPropertyDescriptor(Element.prototype, 'outerHTML');
  if (!inner?.set || !outer?.set) {
    throw new Error('penguin: this browser has no innerHTML/outerHTML setters to guard');
  }
  const setInner = inner.set as (this: Element, v: string) => void;
  const setOuter = outer.set as (this: Element, v: string) => void;
  Object.defineProperty(Element.prototype, 'innerHTML', {
    ...inner,
    set(this: Element, value: unknown) {
      if (typeof value !== 'string' || !HTTP_EQUIV.test(value) || this instanceof HTMLTemplateElement) {
        setInner.call(this, value as string); // a template's content is inert until inserted
        return;
      }
      this.replaceChildren(...parsedNodes(value, this, setInner));
    }
  });
  Object.defineProperty(Element.prototype, 'outerHTML', {
    ...outer,
    set(this: Element, value: unknown) {
      const parent = this.parentNode;
      if (typeof value !== 'string' || !HTTP_EQUIV.test(value) || parent === null || parent instanceof Document) {
        setOuter.call(this, value as string); // unchanged, or the error it raises
        return;
      }
      this.replaceWith(...parsedNodes(value, parent instanceof Element ? parent : null, setInner));
    }
  });
  const insertAdjacentHTML = Element.prototype.insertAdjacentHTML;
  Element.prototype.insertAdjacentHTML = function (this: Element, position: InsertPosition, text: string): void {
    const where = String(position).toLowerCase();
    const outside = where === 'beforebegin' || where === 'afterend';
    if (typeof text !== 'string' || !HTTP_EQUIV.test(text) || (outside && this.parentNode === null)) {
      return insertAdjacentHTML.call(this, position, text);
    }
    const nodes = parsedNodes(text, outside ? this.parentElement : this, setInner);
    switch (where) {
      case 'beforebegin':
        return this.before(...nodes);
      case 'afterbegin':
        return this.prepend(...nodes);
      case 'beforeend':
        return this.append(...nodes);
      case 'afterend':
        return this.after(...nodes);
      default:
        return insertAdjacentHTML.call(this, position, text); // its SyntaxError
    }
  };
  const setHTMLUnsafe = (Element.prototype as unknown as Record<string, unknown>).setHTMLUnsafe;
  if (typeof setHTMLUnsafe === 'function') {
    Object.defineProperty(Element.prototype, 'setHTMLUnsafe', {
      value: function (this: Element, html: unknown): void {
        if (typeof html !== 'string' || !HTTP_EQUIV.test(html)) {
          return (setHTMLUnsafe as AnyFunction).call(this, html) as void;
        }
        this.innerHTML = html; // guarded above (declarative shadow roots are not kept here)
      },
      writable: true,
      configurable: true
    });
  }
}

export const noRefreshPlugin: JupyterFrontEndPlugin<void> = {
  id: NO_REFRESH_PLUGIN,
  description: 'Takes http-equiv off every <meta> an output or widget adds, before the page acts on it (no meta refresh).',
  autoStart: true,
  activate: () => {
    installNoRefreshGuard();
  }
};
