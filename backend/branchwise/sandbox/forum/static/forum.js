// Postmill's comment collapse: a '#' link whose script hides the thread below it; nothing is sent.
"use strict";

document.addEventListener("click", (event) => {
  const toggle = event.target.closest(".js-collapse");
  if (!toggle) return;
  event.preventDefault();
  const comment = toggle.closest(".comment");
  const collapsed = !comment.classList.contains("collapsed");
  comment.classList.toggle("collapsed", collapsed);
  for (const part of comment.querySelectorAll(":scope > article > :not(.comment-meta)")) part.hidden = collapsed;
  toggle.textContent = collapsed ? "[+]" : "[–]";
  toggle.title = collapsed ? "Expand the thread" : "Collapse the thread";
});
