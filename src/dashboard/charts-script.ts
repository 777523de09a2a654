/**
 * The charts page's browser script, served as charts.js after Chart.js's UMD
 * build (both `defer`, so they run in order once the page is parsed). Plain
 * ES2020 without modules: nothing to build, and the CSP's script-src 'self'
 * allows it. It reads the page's #chart-data (ChartsView in pages/charts.ts)
 * and draws each canvas; a canvas it cannot draw shows its table instead.
 *
 * Animation is off: a screenshot taken once `window.hotlineChartsDrawn` is
 * true (`body[data-charts=drawn]`) shows the finished charts.
 */
export const CHARTS_SCRIPT = String.raw`(function () {
  'use strict';
  var source = document.getElementById('chart-data');
  if (!source) return;
  var data = JSON.parse(source.textContent || '{}');

  var BLUE = '#2f6fed', ORANGE = '#f79009', GREEN = '#12b76a', RED = '#b42318', PURPLE = '#7a5af8', GREY = '#98a2b3';
  var OUTCOME_COLOURS = [BLUE, GREEN, ORANGE, PURPLE, RED, '#2e90fa', '#ee46bc', GREY, '#66c61c', '#854a0e'];

  // The canvas's content is its fallback; without a drawing it must be seen, so it takes the canvas's place.
  function showFallback(canvas) {
    canvas.replaceWith.apply(canvas, Array.from(canvas.childNodes));
  }

  function labelTail(from) {
    return function (value) {
      return String(this.getLabelForValue(value)).slice(from);
    };
  }

  function base(extra) {
    var options = {
      animation: false,
      responsive: true,
      // The height is the CSS's (.chart): a height that follows the width changes whenever the
      // viewport does, and a full-page screenshot resizes it mid-capture.
      maintainAspectRatio: false,
      plugins: { legend: { display: false } },
    };
    return Object.assign(options, extra);
  }

  // A value with no neighbour draws no line: only its point shows it, so that point is drawn larger.
  function isolated(values, i) {
    return values[i] != null && values[i - 1] == null && values[i + 1] == null;
  }

  function line(label, values, colour, dashed) {
    return {
      label: label,
      data: values,
      borderColor: colour,
      backgroundColor: colour,
      borderDash: dashed ? [6, 4] : [],
      pointRadius: values.map(function (_, i) { return isolated(values, i) ? 4 : 2; }),
      pointHoverRadius: 5,
      spanGaps: false,
    };
  }

  // Days sit in the middle of their slot, as the bars do: the first and the last day's point is
  // drawn whole, never cut in half by the chart's edge (today is often the only day with a value).
  function dayAxis() {
    return { offset: true, ticks: { callback: labelTail(5) } };
  }

  var narrow = typeof window.matchMedia === 'function' && window.matchMedia('(max-width: 700px)').matches;

  var charts = {
    'chart-hours': function () {
      return {
        type: 'bar',
        data: { labels: data.hours.labels, datasets: [{ label: 'Calls', data: data.hours.calls, backgroundColor: BLUE }] },
        // "2026-11-23 05:00" reads as "05:00" on the axis; the tooltip keeps the day.
        options: base({ scales: { x: { ticks: { callback: labelTail(11) } }, y: { beginAtZero: true, ticks: { precision: 0 } } } }),
      };
    },
    'chart-days': function () {
      return {
        type: 'bar',
        data: { labels: data.days.labels, datasets: [{ label: 'Calls', data: data.days.calls, backgroundColor: BLUE }] },
        options: base({ scales: { x: { ticks: { callback: labelTail(5) } }, y: { beginAtZero: true, ticks: { precision: 0 } } } }),
      };
    },
    'chart-outcomes': function () {
      return {
        type: 'doughnut',
        data: {
          labels: data.outcomes.labels,
          datasets: [{ label: 'Calls', data: data.outcomes.calls, backgroundColor: data.outcomes.labels.map(function (_, i) {
            return OUTCOME_COLOURS[i % OUTCOME_COLOURS.length];
          }) }],
        },
        // On a phone the legend goes under the ring: beside it, it would squeeze the ring to nothing.
        options: base({ plugins: { legend: { display: true, position: narrow ? 'bottom' : 'right' } } }),
      };
    },
    'chart-latency': function () {
      var d = data.days;
      return {
        type: 'line',
        data: {
          labels: d.labels,
          datasets: [
            line('First speak p50', d.firstSpeakP50, BLUE, false),
            line('First speak p95', d.firstSpeakP95, BLUE, true),
            line('LLM first token p50', d.llmFirstTokenP50, ORANGE, false),
            line('LLM first token p95', d.llmFirstTokenP95, ORANGE, true),
          ],
        },
        options: base({
          plugins: { legend: { display: true, position: 'bottom' } },
          scales: {
            x: dayAxis(),
            y: { beginAtZero: true, title: { display: true, text: 'ms' } },
          },
        }),
      };
    },
    'chart-barge-ins': function () {
      return {
        type: 'line',
        data: { labels: data.days.labels, datasets: [line('Barge-ins per turn (%)', data.days.bargeInPercent, RED, false)] },
        options: base({
          scales: {
            x: dayAxis(),
            y: { beginAtZero: true, title: { display: true, text: '% of turns' } },
          },
        }),
      };
    },
  };

  var failed = 0;
  Object.keys(charts).forEach(function (id) {
    var canvas = document.getElementById(id);
    if (!canvas) return;
    if (typeof Chart === 'undefined') {
      failed++;
      showFallback(canvas);
      return;
    }
    try {
      new Chart(canvas, charts[id]());
    } catch (error) {
      // One broken chart leaves the others drawn.
      failed++;
      console.error('chart ' + id + ' not drawn', error);
      showFallback(canvas);
    }
  });
  window.hotlineChartsDrawn = failed === 0;
  // The same on the page, where a test can wait for it without running a script (CSP allows no eval).
  if (document.body && document.body.dataset) document.body.dataset.charts = failed === 0 ? 'drawn' : 'failed';
})();
`;
