// The run's progress page: polls /status (served by the app itself: the CSP allows no inline
// script) and follows the run to its result.
(function () {
  const bar = document.getElementById("bar");
  if (bar.dataset.progress) {
    bar.firstElementChild.style.width = Math.round(100 * Number(bar.dataset.progress)) + "%";
  }
  (function poll() {
    fetch("/status", {credentials: "same-origin"}).then(r => r.json()).then(s => {
      if (s.progress !== null) {
        bar.classList.remove("unknown");
        bar.firstElementChild.style.width = Math.round(100 * s.progress) + "%";
      }
      document.getElementById("stage").textContent = s.stage + " · " + s.seconds + " s";
      bar.classList.toggle("unknown", s.progress === null && s.state === "running");
      if (s.state === "done") { location.href = "/result"; return; }
      if (s.state === "failed") {
        document.getElementById("title").textContent = "The run failed";
        const e = document.getElementById("run-error"); e.hidden = false;
        e.textContent = s.error + (s.exit_code ? " (exit code " + s.exit_code + ")" : "");
        const link = document.createElement("a");
        link.className = "button"; link.href = "/dataset"; link.textContent = "Change the settings";
        document.getElementById("links").replaceChildren(link);
        return;
      }
      setTimeout(poll, 400);
    }).catch(() => setTimeout(poll, 1000));
  })();
})();
