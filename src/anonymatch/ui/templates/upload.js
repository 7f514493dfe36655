// The upload form: a file past the app's upload limit is refused here at once (the server
// refuses it too, with 413, but a browser still sending a large body may show a reset instead).
(function () {
  const form = document.getElementById("upload");
  if (!form) { return; }
  form.addEventListener("submit", function (event) {
    const input = document.getElementById("file");
    const file = input.files && input.files[0];
    if (file && file.size > Number(form.dataset.maxBytes)) {
      event.preventDefault();
      let error = document.getElementById("error");
      if (!error) {
        error = document.createElement("p");
        error.className = "error";
        error.id = "error";
        document.querySelector("main").prepend(error);
      }
      error.textContent = "error: " + file.name + " is larger than the upload limit of " +
        form.dataset.maxShown + " (anonymatch ui --max-upload-mb)";
    }
  });
})();
