import {
  HttpClient,
  provideHttpClient,
  withInterceptors,
} from '@angular/common/http';
import {
  HttpTestingController,
  provideHttpClientTesting,
} from '@angular/common/http/testing';
import { TestBed } from '@angular/core/testing';
import { Router, provideRouter } from '@angular/router';
import { AuthStore } from '../auth/auth-store';
import { apiInterceptor } from './api.interceptor';
import { ServerStatus } from './server-status';

describe('apiInterceptor', () => {
  let http: HttpClient;
  let backend: HttpTestingController;
  let router: Router;
  let auth: AuthStore;
  let server: ServerStatus;
  let navigate: jest.SpyInstance;

  beforeEach(() => {
    TestBed.configureTestingModule({
      providers: [
        provideHttpClient(withInterceptors([apiInterceptor])),
        provideHttpClientTesting(),
        provideRouter([]),
      ],
    });
    http = TestBed.inject(HttpClient);
    backend = TestBed.inject(HttpTestingController);
    router = TestBed.inject(Router);
    auth = TestBed.inject(AuthStore);
    server = TestBed.inject(ServerStatus);
    navigate = jest.spyOn(router, 'navigate').mockResolvedValue(true);
    // Pretend the owner is logged in and looking at some page.
    auth.login('x').subscribe();
    backend.expectOne('/api/auth/login').flush({});
    jest.spyOn(router, 'url', 'get').mockReturnValue('/elsewhere?tab=2');
  });

  afterEach(() => backend.verify());

  const ignore = { error: () => undefined };

  it('on a 401 from an API route forgets the session and goes to the login, returning here later', () => {
    const errors: unknown[] = [];
    http
      .get('/api/system')
      .subscribe({ error: (e: unknown) => errors.push(e) });
    backend
      .expectOne('/api/system')
      .flush(
        { statusCode: 401, message: 'Unauthorized' },
        { status: 401, statusText: 'Unauthorized' },
      );

    expect(auth.authenticated()).toBe(false);
    expect(auth.ownerExists()).toBe(true);
    expect(navigate).toHaveBeenCalledWith(['/login'], {
      queryParams: { returnUrl: '/elsewhere?tab=2' },
    });
    expect(errors).toHaveLength(1); // the caller still sees the error
  });

  it('leaves a 401 from the auth routes (wrong password) to the page', () => {
    http.post('/api/auth/login', { password: 'nope' }).subscribe(ignore);
    backend
      .expectOne('/api/auth/login')
      .flush(
        { statusCode: 401, message: 'Wrong password' },
        { status: 401, statusText: 'Unauthorized' },
      );
    expect(navigate).not.toHaveBeenCalled();
    expect(auth.authenticated()).toBe(true);
  });

  it('reports an unreachable server, and clears the banner after the next success', () => {
    http.get('/api/system').subscribe(ignore);
    backend
      .expectOne('/api/system')
      .error(new ProgressEvent('error'), { status: 0 });
    expect(server.problem()).toMatchObject({
      kind: 'unreachable',
      title: "Can't reach the MetatronOS server",
    });
    expect(server.fullPage()).toBe(false);

    http.get('/api/system').subscribe();
    backend.expectOne('/api/system').flush({});
    expect(server.problem()).toBeNull();
  });

  it('reports 503 as the database being unavailable with the server message', () => {
    http.get('/api/system').subscribe(ignore);
    backend.expectOne('/api/system').flush(
      {
        statusCode: 503,
        message: 'The database is unavailable. Check the server log.',
      },
      { status: 503, statusText: 'Service Unavailable' },
    );
    expect(server.problem()).toMatchObject({
      kind: 'database',
      title: 'The database is unavailable',
      message: 'Check the server log.',
    });
  });

  it('does not raise the banner for auth form posts (they show the error inline) nor for other API errors', () => {
    http.post('/api/auth/login', { password: 'x' }).subscribe(ignore);
    backend
      .expectOne('/api/auth/login')
      .error(new ProgressEvent('error'), { status: 0 });
    http.get('/api/system').subscribe(ignore);
    backend
      .expectOne('/api/system')
      .flush(
        { statusCode: 500, message: 'boom' },
        { status: 500, statusText: 'Server Error' },
      );
    expect(server.problem()).toBeNull();
    expect(navigate).not.toHaveBeenCalled();
  });

  it('ignores requests outside the API', () => {
    http.get('/assets/x.json').subscribe(ignore);
    backend
      .expectOne('/assets/x.json')
      .flush(null, { status: 401, statusText: 'Unauthorized' });
    expect(navigate).not.toHaveBeenCalled();
  });
});
