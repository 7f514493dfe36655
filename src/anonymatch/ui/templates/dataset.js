// The dataset page's form: shows each column's fields for its role and type, and the model's
// fields the chosen method offers (registry capabilities, as data-* attributes of its radio).
// A hidden field is disabled, so it is not sent. Without script every field shows; the server
// checks them all the same.
(function () {
  const form = document.getElementById("settings");
  if (!form) { return; }
  function show(element, on) {
    element.hidden = !on;
    element.querySelectorAll("input, select").forEach(function (input) { input.disabled = !on; });
  }
  function update() {
    form.querySelectorAll("tr.column").forEach(function (row) {
      const role = row.querySelector("select.role").value;
      const type = row.querySelector("select.type").value;
      const typed = role === "qi" || role === "sensitive";
      row.querySelector("select.type").disabled = !typed;
      show(row.querySelector(".for-ordinal"), typed && type === "ordinal");
      show(row.querySelector(".for-date"), typed && (type === "date" || type === "datetime"));
      show(row.querySelector(".for-hierarchy"), role === "qi" && type === "categorical");
      show(row.querySelector(".for-qi"), role === "qi");
    });
    const method = form.querySelector("input[name=method]:checked");
    if (!method) { return; }
    const has = function (name) { return method.dataset[name] === "1"; };
    form.querySelectorAll(".needs-sensitive").forEach(function (e) { show(e, has("sensitive")); });
    form.querySelectorAll(".needs-levels").forEach(function (e) { show(e, has("levels")); });
    form.querySelectorAll(".needs-nolevels").forEach(function (e) { show(e, !has("levels")); });
    form.querySelectorAll(".needs-partitioned").forEach(function (e) { show(e, has("partitioned")); });
  }
  form.addEventListener("change", update);
  update();
})();
