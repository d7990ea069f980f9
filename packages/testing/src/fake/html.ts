// The page shell of the fake's HTML: the hosted page and the reviewer console.

/** `text` safe inside HTML text and quoted attributes. */
export const escapeHtml = (text: string): string => text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

const STYLE = `body{font:16px/1.5 system-ui,sans-serif;max-width:36rem;margin:2rem auto;padding:0 1rem;color:#1d2430}
h1{font-size:1.5rem}label{display:block;margin:.6rem 0}input{font:inherit;width:100%;box-sizing:border-box;padding:.4rem;border:1px solid #bbc;border-radius:.3rem}
button,a.button{font:inherit;padding:.5rem 1rem;margin:.5rem .5rem 0 0;border-radius:.3rem;border:1px solid #556;background:#f4f6fb;color:inherit;text-decoration:none;display:inline-block;cursor:pointer}
.note{font-size:.85rem;color:#556;background:#f6f2e6;border-radius:.3rem;padding:.5rem .7rem}`;

/** A whole page: `style` is added to the shared one (a wider layout, a table). */
export function page(title: string, body: string, style = ''): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>${escapeHtml(title)}</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<style>${STYLE}${style}</style>
</head><body>
${body}
</body></html>`;
}
