import { provideHttpClient } from '@angular/common/http';
import {
  HttpTestingController,
  provideHttpClientTesting,
} from '@angular/common/http/testing';
import { TestBed } from '@angular/core/testing';
import { Router, provideRouter } from '@angular/router';
import type { ServerProblem } from './server-problem';
import { ServerStatus } from './server-status';

const UNREACHABLE: ServerProblem = {
  kind: 'unreachable',
  status: 0,
  title: "Can't reach the MetatronOS server",
  message: 'm',
};

describe('ServerStatus', () => {
  let server: ServerStatus;
  let http: HttpTestingController;
  let navigateByUrl: jest.SpyInstance;

  beforeEach(() => {
    TestBed.configureTestingModule({
      providers: [
        provideHttpClient(),
        provideHttpClientTesting(),
        provideRouter([]),
      ],
    });
    server = TestBed.inject(ServerStatus);
    http = TestBed.inject(HttpTestingController);
    navigateByUrl = jest
      .spyOn(TestBed.inject(Router), 'navigateByUrl')
      .mockResolvedValue(true);
  });

  afterEach(() => http.verify());

  it('shows a banner for a reported problem and a full page for a held navigation', () => {
    server.report(UNREACHABLE);
    expect(server.problem()).toBe(UNREACHABLE);
    expect(server.fullPage()).toBe(false);
    server.blockNavigation('/system', UNREACHABLE);
    expect(server.fullPage()).toBe(true);
  });

  it('keeps the full page until a retry succeeds, then resumes the navigation', () => {
    server.blockNavigation('/system', UNREACHABLE);
    server.markReachable();
    expect(server.problem()).not.toBeNull();

    server.retry();
    expect(server.retrying()).toBe(true);
    http
      .expectOne('/api/auth/status')
      .flush({ ownerExists: true, authenticated: true });
    expect(server.problem()).toBeNull();
    expect(server.fullPage()).toBe(false);
    expect(server.retrying()).toBe(false);
    expect(server.recovered()).toBe(1);
    expect(navigateByUrl).toHaveBeenCalledWith('/system');
  });

  it('shows the new problem when the retry fails too', () => {
    server.blockNavigation('/system', UNREACHABLE);
    server.retry();
    http
      .expectOne('/api/auth/status')
      .flush(
        { statusCode: 503, message: 'The database is unavailable.' },
        { status: 503, statusText: 'Service Unavailable' },
      );
    expect(server.problem()).toMatchObject({
      kind: 'database',
      message: 'The database is unavailable.',
    });
    expect(server.fullPage()).toBe(true);
    expect(server.retrying()).toBe(false);
    expect(navigateByUrl).not.toHaveBeenCalled();
  });

  it('clears a banner after a retry without navigating', () => {
    server.report(UNREACHABLE);
    server.retry();
    http
      .expectOne('/api/auth/status')
      .flush({ ownerExists: true, authenticated: true });
    expect(server.problem()).toBeNull();
    expect(navigateByUrl).not.toHaveBeenCalled();
  });
});
