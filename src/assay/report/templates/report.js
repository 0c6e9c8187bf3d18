(function () {
  "use strict";
  var trials = Array.prototype.slice.call(document.querySelectorAll("#trial-list > details.trial"));
  var state = document.getElementById("filter-state");
  var score = document.getElementById("filter-score");
  var target = document.getElementById("filter-target");
  var search = document.getElementById("filter-search");
  var count = document.getElementById("filter-count");
  if (!state || !score || !target || !search || !count) {
    return;
  }
  function keep(trial) {
    var q = search.value.trim().toLowerCase();
    return (!state.value || trial.dataset.state === state.value) &&
      (!target.value || trial.dataset.target === target.value) &&
      (!score.value || JSON.parse(trial.dataset.scores).indexOf(score.value) >= 0) &&
      (!q || trial.textContent.toLowerCase().indexOf(q) >= 0);
  }
  function apply() {
    var shown = 0;
    trials.forEach(function (trial) {
      var kept = keep(trial);
      trial.hidden = !kept;
      shown += kept ? 1 : 0;
    });
    count.textContent = shown + " of " + trials.length + " trials shown";
  }
  [state, score, target].forEach(function (select) {
    select.addEventListener("change", apply);
  });
  search.addEventListener("input", apply);
  document.getElementById("filters").hidden = false;
  apply();
})();
