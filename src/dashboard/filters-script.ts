/**
 * filters.js: a filter form folds away on a phone. The page sends it open (`<details open>`), so
 * that without this script, or on a desktop, the fields are there as they always were; on a narrow
 * screen it is closed before anyone has to scroll past it, and its summary says how many filters are
 * active. No inline script: CSP script-src 'self'.
 */
import { PHONE_MAX_WIDTH } from './styles.js';

export const FILTERS_SCRIPT = String.raw`(function () {
  'use strict';
  if (!window.matchMedia('(max-width: ${PHONE_MAX_WIDTH}px)').matches) return;
  document.querySelectorAll('details.fold-narrow[open]').forEach(function (box) { box.open = false; });
})();
`;
