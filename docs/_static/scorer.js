/* Search ranking (html_search_scorer in conf.py): Sphinx's own scores, with the history of
   the project (the changelog, the benchmarks and their lab notes) after every guide and API
   page that matches, so that a search for an operator's name leads to where it is used. */
var Scorer = {
  score: (result) => {
    const [docname, , , , score] = result;
    return /^(changelog|benchmarks|HISTORY)$/.test(docname) ? score - 1000 : score;
  },
  // Sphinx's defaults for the rest
  objNameMatch: 11,
  objPartialMatch: 6,
  objPrio: { 0: 15, 1: 5, 2: -5 },
  objPrioDefault: 0,
  title: 15,
  partialTitle: 7,
  term: 5,
  partialTerm: 2,
};
