// MiniSearch's radix tree is a package export ("minisearch/SearchableMap") that this
// project's `node10` module resolution does not read from `exports`: its types, by path.
declare module 'minisearch/SearchableMap' {
  import SearchableMap from 'minisearch/dist/es/SearchableMap';
  export default SearchableMap;
}
