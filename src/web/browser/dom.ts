/**
 * The only way the page builds markup: elements and text nodes. No
 * `innerHTML`, no attribute taken from bundle text except through
 * `textContent` / `setAttribute` of known, inert attributes.
 */
type Child = Node | string | undefined | false;

/** `h('div', { class: 'x' }, 'text', child)`: an element whose strings become text nodes. */
export function h<K extends keyof HTMLElementTagNameMap>(tag: K, attrs: Record<string, string> = {}, ...children: Child[]): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) el.setAttribute(k, v);
  for (const c of children) {
    if (c === undefined || c === false) continue;
    el.append(typeof c === 'string' ? document.createTextNode(c) : c);
  }
  return el;
}

/** Replaces an element's children. */
export function put(el: Element, ...children: Child[]): void {
  el.replaceChildren(...children.filter((c): c is Node | string => c !== undefined && c !== false).map((c) => (typeof c === 'string' ? document.createTextNode(c) : c)));
}

/** Element by id, typed; throws if the page is not the page. */
export function byId<T extends HTMLElement = HTMLElement>(id: string): T {
  const el = document.getElementById(id);
  if (!el) throw new Error(`missing #${id}`);
  return el as T;
}
