// The page of lil serve: who is logged in, the live connection, logout.
"use strict";
let csrf = "";
async function start() {
  const res = await fetch("/api/session");
  if (res.status === 401) { location.href = "/login"; return; }
  const s = await res.json();
  csrf = s.csrf;
  document.getElementById("user").textContent = s.user;
  document.body.dataset.readOnly = String(s.read_only);
  const live = document.getElementById("live");
  const es = new EventSource("/api/stream");
  es.addEventListener("hello", () => { live.dataset.state = "live"; live.textContent = "live"; });
  es.onerror = () => { live.dataset.state = "down"; live.textContent = "down"; };
}
document.getElementById("logout").addEventListener("click", async () => {
  await fetch("/api/logout", { method: "POST", headers: { "Content-Type": "application/json", "X-CSRF-Token": csrf }, body: "{}" });
  location.href = "/login";
});
start();
