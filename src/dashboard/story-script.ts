/**
 * story.js: a page that waits for something the server has not written yet
 * fetches itself again until it is there. The story of a call that ended a
 * moment ago waits for its report (`#report[data-await=report]`, put in place
 * when it comes); the page of a call that has just ended waits for its story
 * (`[data-await=story]`, the page reloads once it is stored).
 *
 * A report takes the model's time, seconds to a minute: the page asks after
 * 1 s, then less often, up to every 15 s, and gives up after about ten
 * minutes with a word to reload later. No inline script: CSP script-src 'self'.
 * `document.body.dataset.awaited` says what arrived (for the tests and a reader).
 */
export const STORY_SCRIPT = String.raw`(function () {
  'use strict';
  var waiting = document.querySelector('[data-await]');
  if (!waiting) return;
  var what = waiting.dataset.await;
  var delay = 1000;
  var deadline = Date.now() + 10 * 60 * 1000;

  function say(text) {
    var status = waiting.querySelector('[role=status]');
    if (status) status.textContent = text;
  }
  function again() {
    if (Date.now() > deadline) return say('Still not there: reload the page later.');
    setTimeout(look, delay);
    delay = Math.min(delay * 1.5, 15000);
  }
  function look() {
    fetch(location.href, { credentials: 'same-origin', cache: 'no-store' }).then(function (res) {
      return res.text().then(function (text) { return { ok: res.ok, doc: new DOMParser().parseFromString(text, 'text/html') }; });
    }).then(function (got) {
      if (what === 'story') {
        if (got.ok && !got.doc.querySelector('[data-await=story]')) { document.body.dataset.awaited = 'story'; return location.reload(); }
        return again();
      }
      var fresh = got.doc.getElementById(waiting.id);
      if (!got.ok || !fresh || fresh.hasAttribute('data-await')) return again();
      waiting.replaceWith(document.importNode(fresh, true));
      document.body.dataset.awaited = what;
    }).catch(again);
  }
  again();
})();
`;
