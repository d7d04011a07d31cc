// Sortable tables: a click on a header sorts the rows by that column's data-value: numbers as numbers where the
// whole value is one, text in its natural order ("cfg2" before "cfg10"; "7b-chat" is text, not the number 7).
document.querySelectorAll("table.sortable").forEach(function (table) {
  table.querySelectorAll("thead th").forEach(function (th, column) {
    th.addEventListener("click", function () {
      var ascending = th.getAttribute("aria-sort") !== "ascending";
      table.querySelectorAll("thead th").forEach(function (other) { other.removeAttribute("aria-sort"); });
      th.setAttribute("aria-sort", ascending ? "ascending" : "descending");
      var body = table.tBodies[0];
      var rows = Array.prototype.slice.call(body.rows);
      var key = function (row) { return row.cells[column].getAttribute("data-value") || ""; };
      var number = function (text) { return text.trim() === "" ? NaN : Number(text); };
      rows.sort(function (a, b) {
        var x = key(a), y = key(b), nx = number(x), ny = number(y);
        var order = (isNaN(nx) || isNaN(ny)) ? x.localeCompare(y, undefined, {numeric: true}) : nx - ny;
        return ascending ? order : -order;
      });
      rows.forEach(function (row) { body.appendChild(row); });
    });
  });
});
// Pareto fronts: each plot's figure is the JSON in the script element its data-plot names.
document.querySelectorAll("[data-plot]").forEach(function (div) {
  var figure = JSON.parse(document.getElementById(div.getAttribute("data-plot")).textContent);
  Plotly.newPlot(div, figure.data, figure.layout, {displaylogo: false, responsive: true});
});
