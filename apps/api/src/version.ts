import packageJson from '../../../package.json';

/** The MetatronOS release, from the root package.json. */
export const APP_VERSION: string = packageJson.version;
