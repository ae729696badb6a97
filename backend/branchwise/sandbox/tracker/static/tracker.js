// Script-driven controls, as real trackers have them: no form around them, the script decides what a click does.
"use strict";

document.addEventListener("click", async (event) => {
  const todo = event.target.closest(".js-todo");
  if (todo) {
    const pending = todo.dataset.pending === "true";
    const error = document.querySelector(".js-todo-error");
    try {
      const reply = await fetch(todo.dataset.url, {
        method: "POST",
        headers: { "Content-Type": "application/x-www-form-urlencoded" },
        body: new URLSearchParams({ todo: pending ? "done" : "add" }),
      });
      if (!reply.ok) throw new Error(String(reply.status));
      todo.dataset.pending = String(!pending);
      todo.textContent = pending ? "Add a to-do item" : "Mark as done";
      error.hidden = true;
    } catch {
      error.setAttribute("role", "alert");
      error.textContent = "Could not update your to-do list.";
      error.hidden = false;
    }
    return;
  }
  const filter = event.target.closest(".js-notes");
  if (filter) {
    event.preventDefault();
    const commentsOnly = filter.dataset.notes === "comments";
    for (const note of document.querySelectorAll(".system-note")) note.hidden = commentsOnly;
    for (const link of document.querySelectorAll(".js-notes")) {
      if (link === filter) link.setAttribute("aria-current", "true");
      else link.removeAttribute("aria-current");
    }
    return;
  }
  const jump = event.target.closest(".js-jump");
  if (jump) {
    const iid = document.getElementById("jump-iid").value.trim();
    if (/^\d+$/.test(iid)) location.assign(jump.dataset.base + iid);
  }
});
