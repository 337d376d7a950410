/* Long names (indexops.dynamic_update_slice) in page titles and tables break after a dot or
   an underscore where a phone's column is too narrow for them, never inside a word: a <wbr>
   after each, which neither copying nor search sees. */
document.addEventListener("DOMContentLoaded", () => {
  for (const root of document.querySelectorAll(".bd-article h1, .bd-article table")) {
    const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
    const texts = [];
    while (walker.nextNode()) texts.push(walker.currentNode);
    for (const text of texts) {
      const parts = text.data.split(/(?<=\S[._])(?=\w)/);
      if (parts.length < 2) continue;
      const pieces = parts.flatMap((part, i) => (i ? [document.createElement("wbr"), part] : [part]));
      text.replaceWith(...pieces);
    }
  }
});
